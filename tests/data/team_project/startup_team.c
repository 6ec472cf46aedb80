/* The team's own start-up: its vector table section, its names, its reset code. */
#include <stdint.h>

extern uint32_t __team_data_load[], __team_data_start[], __team_data_end[];
extern uint32_t __team_bss_start[], __team_bss_end[];
extern uint8_t __kit_stack_top[]; /* the team runs on the plan's stack (kit_sections.ld) */
extern void (*const __team_init_start[])(void), (*const __team_init_end[])(void);

/* C++ objects with destructors register them against it; crtbegin.o is not linked. */
void *__dso_handle = 0;

int main(void);
void team_reset(void);
void team_default_handler(void);
void SysTick_Handler(void) __attribute__((weak, alias("team_default_handler")));

__attribute__((used, section(".team_vectors"))) void (*const team_vectors[64])(void) = {
    (void (*)(void))(uintptr_t)__kit_stack_top, team_reset, team_default_handler,
    team_default_handler, [15] = SysTick_Handler};

void team_default_handler(void)
{
    for (;;) {
    }
}

void team_reset(void)
{
    /* CP10/CP11 full access: the code is built for the FPU */
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
    __asm volatile("dsb\n isb");
    for (uint32_t *s = __team_data_load, *d = __team_data_start; d < __team_data_end;) {
        *d++ = *s++;
    }
    for (uint32_t *d = __team_bss_start; d < __team_bss_end;) {
        *d++ = 0;
    }
    for (void (*const *f)(void) = __team_init_start; f < __team_init_end; ++f) {
        (*f)(); /* C++ static constructors (the kernels' and the delegate's registration) */
    }
    main();
    for (;;) {
    }
}
