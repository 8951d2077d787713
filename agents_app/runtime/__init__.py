"""The agent runtime: model routing through litellm, tools, the loop, traces, replay."""
