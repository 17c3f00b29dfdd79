select total_tokens from ai.context_window(':thread', 8000, 20);
