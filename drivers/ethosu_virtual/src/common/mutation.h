/*
 * ethosu-porting-kit virtual NPU: deliberately wrong rules, to prove the tests notice them.
 *
 * Only the host test library (codegen/ethosu_kit/vnpu/build.py) defines
 * ETHOSU_VIRTUAL_MUTATIONS; in every other build VNPU_MUTANT is the constant 0, so the
 * checks compile away and firmware has no mutation symbol at all.
 */
#ifndef VNPU_MUTATION_H
#define VNPU_MUTATION_H

#include "ethosu_virtual.h"

#include <stdint.h>

#ifdef ETHOSU_VIRTUAL_MUTATIONS
extern uint32_t vnpu_mutation_mask; /* ethosu_virtual_mutation bits, 0 = the real NPU */
#define VNPU_MUTANT(bit) ((vnpu_mutation_mask & (uint32_t)(bit)) != 0u)
#define VNPU_MUTATIONS() vnpu_mutation_mask
#else
#define VNPU_MUTANT(bit) 0
#define VNPU_MUTATIONS() 0u
#endif

#endif /* VNPU_MUTATION_H */
