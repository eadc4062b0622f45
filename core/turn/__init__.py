"""The turn itself: the loop (``loop.run_turn``), its commit (``commit.record_turn``), where
the reply goes (``replies``), ``/stop`` at ingress (``cancel``), the turn's own prompt section
(``sections``) and ``Services`` outside a runtime (``services``). It sits above the feature
packages it calls; they see only ``core.contracts``."""
