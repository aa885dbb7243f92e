--
-- The module is preloaded, the redirect is installed, and the GUCs behave.
--
CREATE EXTENSION btree_jit;

SELECT active, reason ~ '^_bt_binsrch at .* redirected' AS redirected,
       call_sites >= 2 AS has_call_sites,
       binsrch_address ~ '\+0x[0-9a-f]+$' AS has_address,
       evidence IS NOT NULL AS has_evidence,
       server_version ~ '^(15|17|18|19)[^0-9]' AS supported_major
  FROM btree_jit_status();

SHOW btree_jit.enabled;
SHOW btree_jit.verify;

-- enabled is per session and transactional like any GUC
BEGIN;
SET LOCAL btree_jit.enabled = off;
SHOW btree_jit.enabled;
ROLLBACK;
SHOW btree_jit.enabled;

-- unknown settings under the reserved prefix are refused
SET btree_jit.no_such_setting = 1;

-- verify is for superusers only
CREATE ROLE btjit_plain_user;
SET ROLE btjit_plain_user;
SET btree_jit.verify = on;
SET btree_jit.enabled = off;
SHOW btree_jit.enabled;
RESET btree_jit.enabled;
-- the functions that compile or show code are not for everyone
SELECT * FROM btree_jit_compile('pg_class_oid_index');
RESET ROLE;
DROP ROLE btjit_plain_user;
