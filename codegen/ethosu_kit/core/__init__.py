"""The kit's leaf utilities, shared by every stage.

Owns: errors (`KitError` and its subclasses), sizes (`parse_size`, `size_text`,
`align_up`), text escapers for C/CMake/terminal output, the generated project's file
names, the one Jinja environment factory, bounded file readers (`files`), the one
writer (`writer`: atomic files, lock, manifest), typed JSON, lookup by name (`named`),
child processes and the kit root (`paths`).

May import: the standard library and third-party packages only; nothing of the kit
outside `core`.
"""
