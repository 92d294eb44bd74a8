/* Clock synchronisation of two hosts from the TCP packets they exchanged, by the convex-hull
 * method (Duda et al.; Jabbarifar's fully incremental form, as in Trace Compass): every
 * packet bounds the line y = f(x) that maps one clock onto the other, from one side; the
 * lines that respect every bound lie between two extreme ones (the steepest and the
 * flattest), each tangent to both hulls; the rate is estimated from all the packets
 * (mean_slope), the offset is the middle of the band at that rate. */
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
		s->sum_x_xy += p.x;
	} else {
		hull_push(&s->lo, &s->nr_lo, &s->cap_lo, p, false);
		s->n_yx++;
		s->sum_x_yx += p.x;
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

/* Between the two bounding lines, the line that leaves the widest gap to both hulls: the
 * middle of the band of lines that respect every packet. The gap, as a function of the
 * slope, is concave (a minimum of lines minus a maximum of lines), so a ternary search
 * finds its top. When the delays are the same both ways it is the true line (the bisector
 * of the bounding lines is too, but only when the packets are spread evenly over time);
 * either way the clock is within half the gap of it. */
static void best_line(const struct crit_sync *s, double amin, double amax, double *a, double *b,
		      double *lo, double *hi)
{
	double l = amin, h = amax;
	int i;

	for (i = 0; i < 200 && h - l > 1e-15; i++) {
		double m1 = l + (h - l) / 3, m2 = h - (h - l) / 3, lo1, hi1, lo2, hi2;

		b_range(s, m1, &lo1, &hi1);
		b_range(s, m2, &lo2, &hi2);
		if (hi1 - lo1 < hi2 - lo2)
			l = m1;
		else
			h = m2;
	}
	*a = (l + h) / 2;
	b_range(s, *a, lo, hi);
	*b = (*lo + *hi) / 2;
}

/* The slope of the hull's edge over x = m (the hull in x order); false when none spans it. */
static bool edge_at(const struct crit_pt *h, size_t n, double m, double *slope)
{
	size_t i;

	for (i = 0; i + 1 < n; i++)
		if (h[i].x <= m && m <= h[i + 1].x && h[i + 1].x > h[i].x) {
			*slope = (h[i + 1].y - h[i].y) / (h[i + 1].x - h[i].x);
			return true;
		}
	return false;
}

/* The clocks' relative rate from all the packets, not from the few extreme ones: the line
 * under one way's points (over the other's) with the least total delay above it (below it)
 * is the hull's edge over their mean time (the linear-programming estimate of Moon, Skelly
 * and Towsley); the two ways' slopes averaged, kept within the bounding ones. The widest
 * band (best_line) leans on the packets at the ends of the recording: over a delay line
 * with tens of microseconds of jitter, 20 requests in 1.5 s, its drift was off by up to 60
 * ppm, 90 us at the ends. False when neither hull has an edge there. */
static bool mean_slope(const struct crit_sync *s, double amin, double amax, double *a)
{
	double a1 = 0, a2 = 0;
	bool g1 = s->n_xy && edge_at(s->up, s->nr_up, s->sum_x_xy / s->n_xy, &a1);
	bool g2 = s->n_yx && edge_at(s->lo, s->nr_lo, s->sum_x_yx / s->n_yx, &a2);

	if (!g1 && !g2)
		return false;
	*a = g1 && g2 ? (a1 + a2) / 2 : g1 ? a1 : a2;
	*a = fmin(fmax(*a, amin), amax);
	return true;
}

void crit_sync__solve(const struct crit_sync *s, struct crit_sync_result *r)
{
	double amin = -INFINITY, amax = INFINITY, lo, hi;
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
	r->slope_min = has_min ? amin : NAN;
	r->slope_max = has_max ? amax : NAN;
	if (has_min && has_max) {
		double a, b;

		if (amin > amax) {
			r->quality = CRIT_SYNC_FAILED;
			return;
		}
		bool mean = mean_slope(s, amin, amax, &a);

		if (mean) {
			b_range(s, a, &lo, &hi);
			b = (lo + hi) / 2;
		}
		if (!mean || lo > hi)
			best_line(s, amin, amax, &a, &b, &lo, &hi);
		if (lo > hi) {
			r->quality = CRIT_SYNC_FAILED;
			return;
		}
		r->slope = a;
		r->intercept = b;
		r->accuracy_ns = (hi - lo) / 2;
		r->quality = CRIT_SYNC_ACCURATE;
		return;
	}
	/* Only one bounding line, or none (too few packets to bound the slope both ways): the
	 * clocks' nominal rate when the packets allow it, else the one bounding slope. */
	r->slope = 1;
	b_range(s, r->slope, &lo, &hi);
	if (lo > hi && (has_min || has_max)) {
		r->slope = has_min ? amin : amax;
		b_range(s, r->slope, &lo, &hi);
	}
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
