"""MIR transforms: one module per transform, each a pure function Mir -> Mir."""
