/* Threads into clusters by where they spend their time: the boundary between the model and
 * the clustering (src/model/cluster.c). */
#ifndef SRVSCOPE_MODEL_GROUP_H
#define SRVSCOPE_MODEL_GROUP_H

#include <stddef.h>

struct model;
struct model_item;

/* Assigns each of the n items (a thread in one run) a cluster number in assign[], numbered
 * from 0. *threshold: the distance the clustering cut at; *distinct: distinct stack trees.
 * Returns the number of clusters, or -errno. */
int model__group(const struct model *m, const struct model_item *items, size_t n, int *assign,
		 double *threshold, size_t *distinct);

#endif
