"""gramask inside serving engines.

Each submodule imports its engine only when it is used, so ``import gramask`` never
needs them:

- :mod:`gramask.integrations.vllm`: a structured-output backend for vLLM's v1 engine
  (``GramaskBackend`` / ``GramaskGrammar``).
- :mod:`gramask.integrations.vllm_plugin`: the ``vllm.general_plugins`` entry point that
  makes vLLM accept ``structured_outputs_config.backend = "gramask"``.
- :mod:`gramask.integrations.sglang`: SGLang's grammar backend (``register()``, also
  loaded through the ``sglang.srt.plugins`` entry point).
"""
