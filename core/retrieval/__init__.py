"""The retrieval core shared by session search (``core.search``) and skill routing
(``core.skills``): tokenising, thread-safe stemming, BM25 and the fusion of a lexical ranking
with dense similarities. Pure Python (no numpy), cheap to import; each feature keeps its own
parameters (weights, floors, stopwords) and decides how to combine these parts."""
