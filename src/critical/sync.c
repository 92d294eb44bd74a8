/* Clock synchronisation of two hosts from the TCP packets they exchanged, by the convex-hull
 * method (Duda et al.; Jabbarifar's fully incremental form, as in Trace Compass): every
 * packet bounds the line y = f(x) that maps one clock onto the other, from one side; the
 * lines that respect every bound lie between two extreme ones (the steepest and the
 * flattest), each tangent to both hulls, and the answer is their bisector. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "critical/critical.h"
#include "util/util.h"

const char *crit_sync__quality_name(enum crit_sync_quality q)
{
	static const char *const names[] = {"accurate", "approximate", "failed", "absent"};

	return q <= CRIT_SYNC_ABSENT ? names[q] : "?";
}

static double cross(const struct crit_pt *o, const struct crit_pt *a, const struct crit_pt *b)
{
	return (a->x - o->x) * (b->y - o->y) - (a->y - o->y) * (b->x - o->x);
}

/* Andrew's monotone chain, one point at a time (points come in x order): the lower hull
 * keeps left turns only, the upper hull right turns only. */
static void hull_push(struct crit_pt **h, size_t *nr, size_t *cap, struct crit_pt p, bool lower)
{
	while (*nr >= 2) {
		double c = cross(&(*h)[*nr - 2], &(*h)[*nr - 1], &p);

		if (lower ? c > 0 : c < 0)
			break;
		(*nr)--;
	}
	/* The same x twice: keep the tighter bound only. */
	if (*nr && (*h)[*nr - 1].x == p.x) {
		if (lower ? p.y >= (*h)[*nr - 1].y : p.y <= (*h)[*nr - 1].y)
			return;
		(*nr)--;
	}
	xgrow((void **)h, cap, *nr + 1, sizeof(**h));
	(*h)[(*nr)++] = p;
}

void crit_sync__add(struct crit_sync *s, uint64_t x, uint64_t y, bool x_to_y)
{
	struct crit_pt p;

	if (!s->started) {
		s->x0 = x;
		s->y0 = y;
		s->started = true;
	}
	p.x = (double)(int64_t)(x - s->x0);
	p.y = (double)(int64_t)(y - s->y0);
	if (x_to_y) {
		/* received after it was sent: the line passes below */
		hull_push(&s->up, &s->nr_up, &s->cap_up, p, true);
		s->n_xy++;
	} else {
		hull_push(&s->lo, &s->nr_lo, &s->cap_lo, p, false);
		s->n_yx++;
	}
}

/* The offsets b that a line of this slope may take: [*lo, *hi]. */
static void b_range(const struct crit_sync *s, double slope, double *lo, double *hi)
{
	size_t i;

	*lo = -INFINITY;
	*hi = INFINITY;
	for (i = 0; i < s->nr_lo; i++)
		*lo = fmax(*lo, s->lo[i].y - slope * s->lo[i].x);
	for (i = 0; i < s->nr_up; i++)
		*hi = fmin(*hi, s->up[i].y - slope * s->up[i].x);
}

void crit_sync__solve(const struct crit_sync *s, struct crit_sync_result *r)
{
	double amin = -INFINITY, amax = INFINITY, lo, hi, bmin, bmax, span = 0;
	bool has_min = false, has_max = false;
	size_t i, j;

	memset(r, 0, sizeof(*r));
	r->slope = 1;
	if (!s->n_xy && !s->n_yx) {
		r->quality = CRIT_SYNC_ABSENT;
		return;
	}
	if (!s->n_xy || !s->n_yx) {
		/* One way only bounds the offset from one side: any later clock fits. */
		r->quality = CRIT_SYNC_FAILED;
		return;
	}
	/* The steepest line goes above a Y->X point on the left and below an X->Y point on the
	 * right; the flattest the other way round. */
	for (i = 0; i < s->nr_lo; i++)
		for (j = 0; j < s->nr_up; j++) {
			const struct crit_pt *l = &s->lo[i], *u = &s->up[j];
			double a;

			if (l->x < u->x) {
				a = (u->y - l->y) / (u->x - l->x);
				if (a < amax)
					amax = a;
				has_max = true;
			} else if (u->x < l->x) {
				a = (l->y - u->y) / (l->x - u->x);
				if (a > amin)
					amin = a;
				has_min = true;
			}
		}
	for (i = 0; i < s->nr_lo; i++)
		span = fmax(span, fabs(s->lo[i].x));
	for (i = 0; i < s->nr_up; i++)
		span = fmax(span, fabs(s->up[i].x));
	r->slope_min = has_min ? amin : NAN;
	r->slope_max = has_max ? amax : NAN;
	if (has_min && has_max) {
		double bmid_max, bmid_min, x, y;

		if (amin > amax) {
			r->quality = CRIT_SYNC_FAILED;
			return;
		}
		b_range(s, amax, &lo, &hi);
		bmid_max = (lo + hi) / 2;
		b_range(s, amin, &lo, &hi);
		bmid_min = (lo + hi) / 2;
		r->slope = tan((atan(amin) + atan(amax)) / 2);
		if (amax - amin > 1e-15) {
			x = (bmid_min - bmid_max) / (amax - amin);
			y = amax * x + bmid_max;
			r->intercept = y - r->slope * x;
		} else {
			r->intercept = (bmid_min + bmid_max) / 2;
		}
		r->quality = CRIT_SYNC_ACCURATE;
		/* Half the gap between the bounding lines where the packets are. */
		bmin = fabs((amax - amin) * span + (bmid_max - bmid_min));
		bmax = fabs(bmid_max - bmid_min);
		r->accuracy_ns = fmax(bmin, bmax) / 2;
		b_range(s, r->slope, &lo, &hi);
		if (lo > hi + 1)
			r->quality = CRIT_SYNC_FAILED;
		return;
	}
	/* Only one bounding line, or none: the slope it gives (else the clocks' nominal 1),
	 * and the middle of the offsets it allows. */
	r->slope = has_min ? amin : has_max ? amax : 1;
	b_range(s, r->slope, &lo, &hi);
	if (lo > hi) {
		r->quality = CRIT_SYNC_FAILED;
		return;
	}
	r->intercept = (lo + hi) / 2;
	r->accuracy_ns = (hi - lo) / 2;
	r->quality = CRIT_SYNC_APPROXIMATE;
}

void crit_sync__free(struct crit_sync *s)
{
	free(s->up);
	free(s->lo);
	memset(s, 0, sizeof(*s));
}
