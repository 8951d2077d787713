"""The session's dispatch version: a counter PostgreSQL triggers raise whenever anything
a tool call's dispatch point and gate decide on changes, whoever writes it (a service,
the admin, a shell).

A running unit reuses one reading of its session for many tool calls and stores each
decision only if this counter still holds the value it read (``agents_app.gate.session``,
``agents_app.services.dispatch_points``): a steer, a pause, a /stop, a policy change or an
approval takes effect at the next call, with no query of its own. Raised by:

* the session's own row, when an axis, the pause, the /stop, the status or the project
  changes (never backwards: a ``save()`` of an older copy keeps the higher value);
* a mode transition inserted, changed or deleted (steering pending, applied, cancelled);
* a risk decision reviewed or a once-approval used (or one inserted already approved);
* an approval rule of the session's project granted, changed or revoked;
* the project's row changed (its policy).

Other databases (the embedded SQLite) get the column without triggers; the engine then
reads the session at every call, as before (``SessionGate.validates_readings``).
"""

from django.db import migrations, models

SESSION_COLUMNS = (
    "work_mode, run_control, permission_profile, model_mode, surface, status, paused, "
    "interrupt_requested, project_id"
)


def _old_new(prefix: str) -> str:
    return ", ".join(f"{prefix}.{column.strip()}" for column in SESSION_COLUMNS.split(","))


CREATE = f"""
CREATE FUNCTION sf_session_dispatch_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.dispatch_version := GREATEST(OLD.dispatch_version, NEW.dispatch_version);
    IF ({_old_new("OLD")}) IS DISTINCT FROM ({_old_new("NEW")}) THEN
        NEW.dispatch_version := NEW.dispatch_version + 1;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER sf_session_dispatch_version BEFORE UPDATE ON agents_app_agentsession
    FOR EACH ROW EXECUTE FUNCTION sf_session_dispatch_version();

CREATE FUNCTION sf_bump_sessions(session_ids bigint[], project_ids bigint[])
RETURNS void LANGUAGE sql AS $$
    -- In the order of their ids, so that two bumps of overlapping sessions never
    -- deadlock on each other's row locks; NO KEY, as the update itself takes, so the
    -- running units' inserts (their foreign keys' KEY SHARE checks) never wait on it.
    WITH locked AS (
        SELECT id FROM agents_app_agentsession
        WHERE id = ANY(session_ids) OR project_id = ANY(project_ids)
        ORDER BY id FOR NO KEY UPDATE
    )
    UPDATE agents_app_agentsession s SET dispatch_version = s.dispatch_version + 1
    FROM locked WHERE s.id = locked.id;
$$;

CREATE FUNCTION sf_bump_session_of_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM sf_bump_sessions(ARRAY[NEW.session_id], ARRAY[]::bigint[]);
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM sf_bump_sessions(ARRAY[OLD.session_id], ARRAY[]::bigint[]);
    ELSE
        PERFORM sf_bump_sessions(ARRAY[OLD.session_id, NEW.session_id], ARRAY[]::bigint[]);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER sf_transition_dispatch_version
    AFTER INSERT OR UPDATE OR DELETE ON agents_app_modetransition
    FOR EACH ROW EXECUTE FUNCTION sf_bump_session_of_row();
CREATE TRIGGER sf_decision_reviewed_dispatch_version AFTER UPDATE ON agents_app_riskdecision
    FOR EACH ROW WHEN (
        (OLD.review_status, OLD.review_scope, OLD.used_at, OLD.session_id)
        IS DISTINCT FROM (NEW.review_status, NEW.review_scope, NEW.used_at, NEW.session_id)
    ) EXECUTE FUNCTION sf_bump_session_of_row();
CREATE TRIGGER sf_decision_approved_dispatch_version AFTER INSERT ON agents_app_riskdecision
    FOR EACH ROW WHEN (NEW.review_status <> 'not_needed' AND NEW.review_status <> 'pending')
    EXECUTE FUNCTION sf_bump_session_of_row();

CREATE FUNCTION sf_bump_sessions_of_project() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    column_name text := TG_ARGV[0];
    old_id bigint;
    new_id bigint;
BEGIN
    IF TG_OP <> 'INSERT' THEN
        old_id := (to_jsonb(OLD) ->> column_name)::bigint;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        new_id := (to_jsonb(NEW) ->> column_name)::bigint;
    END IF;
    PERFORM sf_bump_sessions(ARRAY[]::bigint[], ARRAY[old_id, new_id]);
    RETURN NULL;
END $$;
CREATE TRIGGER sf_rule_dispatch_version
    AFTER INSERT OR UPDATE OR DELETE ON agents_app_approvalrule
    FOR EACH ROW EXECUTE FUNCTION sf_bump_sessions_of_project('project_id');
CREATE TRIGGER sf_project_dispatch_version AFTER UPDATE ON agents_app_project
    FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*)
    EXECUTE FUNCTION sf_bump_sessions_of_project('id');
"""

DROP = """
DROP TRIGGER IF EXISTS sf_project_dispatch_version ON agents_app_project;
DROP TRIGGER IF EXISTS sf_rule_dispatch_version ON agents_app_approvalrule;
DROP TRIGGER IF EXISTS sf_decision_approved_dispatch_version ON agents_app_riskdecision;
DROP TRIGGER IF EXISTS sf_decision_reviewed_dispatch_version ON agents_app_riskdecision;
DROP TRIGGER IF EXISTS sf_transition_dispatch_version ON agents_app_modetransition;
DROP TRIGGER IF EXISTS sf_session_dispatch_version ON agents_app_agentsession;
DROP FUNCTION IF EXISTS sf_bump_sessions_of_project();
DROP FUNCTION IF EXISTS sf_bump_session_of_row();
DROP FUNCTION IF EXISTS sf_bump_sessions(bigint[], bigint[]);
DROP FUNCTION IF EXISTS sf_session_dispatch_version();
"""


def create_triggers(apps, schema_editor):  # noqa: ANN001, ARG001
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE)


def drop_triggers(apps, schema_editor):  # noqa: ANN001, ARG001
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [("agents_app", "0015_repairrecord")]

    operations = [
        migrations.AddField(
            model_name="agentsession",
            name="dispatch_version",
            field=models.PositiveBigIntegerField(default=0, editable=False),
        ),
        migrations.RunPython(create_triggers, drop_triggers),
    ]
