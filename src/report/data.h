/* The aggregates of one trace as the HTML report's JSON (docs/report.md): a summary, a row
 * per thread, the blocking and wake-up totals, the longest episodes, the delay
 * histograms, three flame trees and each thread's timeline in time buckets. */
#ifndef SRVSCOPE_REPORT_DATA_H
#define SRVSCOPE_REPORT_DATA_H

struct json_writer;
struct report_opts;
struct trace;

/* Writes one object for trace t (read from path, its thread names escaped) to w. Runs
 * every analysis once; drops the trace's events at the end. */
void report_data__trace(struct json_writer *w, struct trace *t, const char *path,
			const struct report_opts *o);

#endif
