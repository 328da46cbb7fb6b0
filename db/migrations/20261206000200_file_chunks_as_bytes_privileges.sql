-- migrate:up

/** On Citus, the privileges of api.file_upload_chunks(text, integer, bytea[]) on every worker
 * (outside the previous migration's transaction, as app_private.citus_copy_privileges needs). On
 * one server it does nothing. */
call app_private.citus_copy_privileges();

-- migrate:down
