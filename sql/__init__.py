"""Pure planning: parsing, name resolution, types, HIR, MIR, MIR transforms, EXPLAIN."""
