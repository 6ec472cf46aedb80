/* The team's main: its own board bring-up, then the kit's app; its result is the exit code. */
#include "kit/app.h"
#include "kit/platform.h"

int main(void);

int main(void)
{
    const int rc = ethosu_kit_app_main();
    kit_hal_exit(rc); /* semihosting: QEMU exits with the app's code */
}
