"""What the turn hands to the parts that plug into it, and what they hand back: the tool
interface (``toolkit``), prompt sections (``prompt``), after-turn hooks (``hooks``), the
services (``services``, ``senders``, ``dispatch``), what a turn runs with (``deps``) and what it
returns (``outcome``).

Low on purpose: these modules import only the kernel, the store's types and the model's types,
so every feature package can name them and none of them names a feature package (the
``layers`` contract in pyproject.toml, counting type-only imports)."""
