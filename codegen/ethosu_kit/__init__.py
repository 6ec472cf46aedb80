"""ethosu-porting-kit: from an ExecuTorch .pte lowered for Ethos-U to placed, checked firmware.

Data flow, one module per stage:
    pte (ethosu_kit.pte) -> ModelInfo (model_info) -> MemoryPlan (planner, memory_plan)
    -> generated files (generate) -> built ELF (build) -> check (elf_check)
"""

__version__ = "0.1.0"
