/*
 * ethosu-porting-kit virtual NPU: the Ethos-U85 command interpreter (stub).
 */
#include "vnpu.h"

#include <stdio.h>

int vnpu_u85_run(struct vnpu_env *env, const uint32_t *words, size_t nwords)
{
    (void)words;
    (void)nwords;
    snprintf(env->error, ETHOSU_VIRTUAL_ERROR_LEN, "Ethos-U85 command streams are not modelled yet");
    return -1;
}
