"""Facts about the Arm Ethos-U products, written once.

Owns: NPU alignment, MAC configurations, memory modes (`MemoryMode`), default
registers, CONFIG.product ids, Vela's region indices, the accelerator name
(`Accelerator`), and the firmware's exit codes.

May import: `core` only.
"""
