/* A JSON document the user names on the command line (a config, a model), read the way
 * every input file is (util/safefile.h, safefile__open_input): a regular file, so that a
 * FIFO planted at the path cannot hang the read nor a device see an open (standard input
 * and a shell's <(...) are read as the streams they are), of a bounded size. */
#ifndef SRVSCOPE_JSONFILE_H
#define SRVSCOPE_JSONFILE_H

#include <jansson.h>
#include <stddef.h>

/* The document at path (jansson flags as json_loadfd), or NULL with err filled: jansson's
 * own message and line for a document that is not JSON; for a file that cannot be read,
 * line -1 and what is wrong ("not a regular file", "bigger than N bytes", ...). */
json_t *jsonfile__load(const char *path, size_t max_bytes, size_t flags, json_error_t *err);

#endif
