-- Verify agent-state:errors on pg
select 1 / count(*) from ai.error_codes where sqlstate = 'AS001';
select ai._check_text('x', 'x');
select ai._check_document('{}'::jsonb, 'x');
select ai._check_limit(1, 'x');
