"""The log audit: a pure auditor (:mod:`shared.audit.auditor`), raw-commit export files
(:mod:`shared.audit.export`) and sample logs for tests and benchmarks
(:mod:`shared.audit.sample`). The command line is services/pokerctl/audit_cmd.py."""

from .auditor import Failure, TableAudit, TableAuditor, audit_table

__all__ = ["Failure", "TableAudit", "TableAuditor", "audit_table"]
