"""gramask inside inference engines: ``gramask.integrations.sglang`` (SGLang's grammar
backend) and ``gramask.integrations.vllm`` (vLLM's structured-output backend). Each module
imports its engine only when used."""
