/* The app exit protocol (kit/app.h): the one place that prints "kit: exit N". */
#include "kit/app.h"

#include "kit/log.h"

/* `ethosu-kit run` (codegen/ethosu_kit/commands/run.py) parses this line: keep it as is. */
int kit_app_result(int code)
{
    kit_printf("kit: exit %d\n", code);
    return code;
}
