select seq from ai.append_message_idempotent(':prefix' || '1', 'system', '{"text": "the same message again"}');
