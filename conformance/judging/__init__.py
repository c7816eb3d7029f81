"""The judge: the executable model of the spec, the kit's own oracle, and the one call site.

- ``_spec_model/``: the spec's rules as data (each citing the words it enforces) and the checks of one
  reply against them: labels, qualities, post-process, search, lookup. Pure: no engine, no pytest.
- ``_oracle``: the corpus in the kit's own Milvus collection, answered from first principles
  (brute-force squared L2, RRF fused from the engine's separate dense and BM25 answers).
- ``_truth``: the oracle's answer to a search or lookup question, as the model's truths (ties, spill
  past the end, other RRF parameters a conforming implementation may use).
- ``_judge``: :class:`Judge`, which asks the implementation and checks every reply whole.
- ``_attribution``: counterfactual questions that find which input's influence broke a rule.
- ``_retry_terms``: the category retry decided on the implementation's own terms.
- ``_advice``: choices the spec allows that defeat its purpose, said beside the verdict.
- ``_engine_calls``: calls to Milvus asked again once when the engine answers an error: the oracle's
  own, and the implementation's searches and lookups the judge asks.
- ``_wire_values``: a reply whose only fault is text where a number belongs, failed under the rule
  owning the field.

It never imports the reference implementation: an oracle sharing the judged code would share its bugs.
"""
