/* Fuzz target: the clone's model parser. Whatever the bytes, it returns 0 or an error with
 * one line of explanation; a model it accepts stays within the limits the server relies on
 * (pools, sizes, steps), and drawing sizes from it stays within its histogram. */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "clone/clone.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct clone_model m;
	char err[256];
	uint64_t seed = 1, v;
	unsigned i;
	int ret = clone_model__parse((const char *)data, size, &m, err, sizeof(err));

	if (ret) {
		assert(err[0] && !strchr(err, '\n'));
		return 0;
	}
	assert(m.accept_pool >= 1 && m.accept_pool <= CLONE_MAX_POOL);
	assert(m.network_pool >= 1 && m.network_pool <= CLONE_MAX_POOL);
	assert(m.processes >= 1 && m.processes <= m.network_pool);
	assert(m.nsteps >= 1 && m.nsteps <= CLONE_MAX_STEPS && m.nbg <= CLONE_MAX_BG);
	assert(m.file_size <= CLONE_MAX_SIZE);
	for (i = 0; i < m.nsteps; i++)
		assert(m.steps[i].sys > CS_NONE && m.steps[i].sys < CS__COUNT &&
		       m.steps[i].niov <= CLONE_MAX_IOV && m.steps[i].bytes <= CLONE_MAX_SIZE);
	for (i = 0; i < 16; i++) {
		v = clone_dist__draw(&m.response, m.answer_bytes, &seed);
		assert(v <= CLONE_MAX_SIZE);
		v = clone_dist__draw(&m.request, 0, &seed);
		assert(v <= CLONE_MAX_SIZE);
	}
	return 0;
}
