/* The kit's whole image only: main is the app's entry. A team's firmware has its own
 * main and calls ethosu_kit_app_main() itself (cmake: ethosu_add_model). */
#include "kit/app.h"

int main(void);

int main(void) { return ethosu_kit_app_main(); }
