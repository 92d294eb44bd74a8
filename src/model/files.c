/* The network threads' files, use by use (files.h). A use's syscalls are kept in order with
 * repeats merged (openat, fstat, sendfile, close), which is both what the clone replays and
 * how uses of files whose paths are not known are told apart. */
#include <stdlib.h>
#include <string.h>

#include "model/files.h"
#include "model/model.h"
#include "util/util.h"

struct file_use {
	uint32_t pid;
	int32_t fd;
	bool live, opened, append, positional;
	bool unsampled; /* opened between the windows of a sampled recording: not counted */
	uint64_t reads, writes, read_bytes, written_bytes, other, off_max;
	int16_t ops[MODEL_FILE_OPS];
	unsigned nr_ops;
};

static uint64_t key_of(uint32_t pid, int32_t fd)
{
	return (uint64_t)pid << 32 | (uint32_t)fd;
}

static void add_op(struct file_use *u, int nr)
{
	if (u->nr_ops && u->ops[u->nr_ops - 1] == nr)
		return;
	if (u->nr_ops < MODEL_FILE_OPS)
		u->ops[u->nr_ops++] = (int16_t)nr;
}

/* A use is over: summed into its file. */
static void fold(struct model_file_walk *fw, struct model_run *run, struct file_use *u)
{
	const struct model_fd *snap = model_fds__find(&run->fds, u->pid, u->fd);
	const char *path = !u->opened && snap && snap->path ? snap->path : NULL;
	uint64_t key, *slot, moved;
	struct model_file *f;
	bool created;

	(void)fw;
	u->live = false;
	if (path) {
		key = fnv1a_str(path, FNV1A_INIT);
	} else {
		key = fnv1a(u->ops, u->nr_ops * sizeof(u->ops[0]), FNV1A_INIT);
		key = fnv1a(&u->opened, sizeof(u->opened), key);
	}
	slot = u64map__slot(&run->file_idx, key, &created);
	if (created) {
		xgrow((void **)&run->files, &run->cap_files, run->nr_files + 1,
		      sizeof(*run->files));
		f = &run->files[run->nr_files];
		memset(f, 0, sizeof(*f));
		f->key = key;
		f->path = path ? xstrdup(path) : NULL;
		f->before = !u->opened;
		f->size = path && snap->regular ? snap->size : -1;
		f->append = u->append || (!u->opened && snap && snap->append);
		memcpy(f->ops, u->ops, sizeof(f->ops));
		f->nr_ops = u->nr_ops;
		*slot = ++run->nr_files;
	}
	f = &run->files[*slot - 1];
	f->opens += u->opened;
	f->uses++;
	f->reads += u->reads;
	f->writes += u->writes;
	f->read_bytes += u->read_bytes;
	f->written_bytes += u->written_bytes;
	f->other_calls += u->other;
	f->positional |= u->positional;
	if (u->off_max > f->off_max)
		f->off_max = u->off_max;
	moved = u->read_bytes > u->written_bytes ? u->read_bytes : u->written_bytes;
	model_sizes__add(&f->per_use, moved);
}

static struct file_use *use_at(struct model_file_walk *fw, uint32_t pid, int32_t fd)
{
	uint64_t v;

	if (!u64map__get(&fw->use, key_of(pid, fd), &v) || !v || !fw->u[v - 1].live)
		return NULL;
	return &fw->u[v - 1];
}

static struct file_use *new_use(struct model_file_walk *fw, uint32_t pid, int32_t fd)
{
	struct file_use *u;

	xgrow((void **)&fw->u, &fw->cap, fw->nr + 1, sizeof(*fw->u));
	u = &fw->u[fw->nr++];
	memset(u, 0, sizeof(*u));
	u->pid = pid;
	u->fd = fd;
	u->live = true;
	u64map__put(&fw->use, key_of(pid, fd), fw->nr);
	return u;
}

void files__open(struct model_file_walk *fw, struct model_run *run, uint32_t pid, int32_t fd,
		 int nr, bool append, bool sampled)
{
	struct file_use *u = use_at(fw, pid, fd);

	if (u && !u->unsampled) /* its close was not seen */
		fold(fw, run, u);
	u = new_use(fw, pid, fd);
	u->unsampled = !sampled;
	u->opened = true;
	u->append = append;
	add_op(u, nr);
}

void files__call(struct model_file_walk *fw, struct model_run *run, uint32_t pid, int32_t fd,
		 const struct model_file_call *c)
{
	struct file_use *u = use_at(fw, pid, fd);

	(void)run;
	if (u && u->unsampled)
		return;
	if (!u)
		u = new_use(fw, pid, fd); /* open before the run, or opened by another thread */
	add_op(u, c->nr);
	if (c->positional)
		u->positional = true;
	if (c->off_known && c->ret > 0 && c->off + (uint64_t)c->ret > u->off_max)
		u->off_max = c->off + (uint64_t)c->ret;
	if (c->read) {
		u->reads++;
		if (c->ret > 0)
			u->read_bytes += (uint64_t)c->ret;
	} else if (c->write) {
		u->writes++;
		if (c->ret > 0)
			u->written_bytes += (uint64_t)c->ret;
	} else {
		u->other++;
	}
}

void files__close(struct model_file_walk *fw, struct model_run *run, uint32_t pid, int32_t fd,
		  bool sampled)
{
	struct file_use *u = use_at(fw, pid, fd);

	if (!u)
		return;
	if (u->unsampled || !sampled) { /* calls of it were made unrecorded */
		u->live = false;
		return;
	}
	add_op(u, 3); /* close */
	fold(fw, run, u);
}

void files__end(struct model_file_walk *fw, struct model_run *run)
{
	size_t i;

	for (i = 0; i < fw->nr; i++)
		if (fw->u[i].live && !fw->u[i].unsampled)
			fold(fw, run, &fw->u[i]);
}

void files__walk_free(struct model_file_walk *fw)
{
	u64map__free(&fw->use);
	free(fw->u);
	memset(fw, 0, sizeof(*fw));
}
