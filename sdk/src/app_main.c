/* The kit's whole image only: main is the app's entry. A team's firmware has its own
 * main and calls ethosu_kit_app_main() itself (cmake: ethosu_add_model). */
#include "kit/app.h"
#include "kit/log.h"

int main(void);

int main(void)
{
    int code = ethosu_kit_app_main();
    /* The last line of every run: an Arm FVP's own exit status need not be the
     * firmware's, so `ethosu-kit run` takes the code from here (docs/running.md). */
    kit_printf("kit: exit %d\n", code);
    return code;
}
