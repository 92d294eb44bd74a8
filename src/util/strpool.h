/* Interned strings: equal strings get one pointer, freed together with the pool. */
#ifndef SRVSCOPE_UTIL_STRPOOL_H
#define SRVSCOPE_UTIL_STRPOOL_H

struct strpool;

struct strpool *strpool__new(void);
/* Accepts NULL. */
void strpool__delete(struct strpool *p);
/* Returns the pool's copy of s (NULL stays NULL). */
const char *strpool__intern(struct strpool *p, const char *s);

#endif
