"""SQLSTATE -> exception class mapping (no server needed)."""
import claimqueue
from claimqueue import (ClaimQueueError, IsolationNotSupportedError, JobNotFoundError,
                        JobStateConflictError, LockKeyModeMismatchError, LockKeyNotFoundError,
                        LockNamespaceNotFoundError, QueueElsewhereError, QueueNotFoundError,
                        ScheduleNotFoundError, StaleClaimError)


class FakeDiag:
    message_primary = "server said it"
    message_detail = "a detail"
    message_hint = "a hint"


class FakeDbError(Exception):
    def __init__(self, sqlstate):
        super().__init__("server said it")
        self.sqlstate = sqlstate
        self.diag = FakeDiag()


EXPECTED = {
    "QC001": QueueNotFoundError, "QC002": JobNotFoundError, "QC003": StaleClaimError,
    "QC004": JobStateConflictError, "QC005": IsolationNotSupportedError,
    "QC006": ScheduleNotFoundError, "QC007": QueueElsewhereError,
    "QCL01": LockNamespaceNotFoundError, "QCL02": LockKeyModeMismatchError, "QCL03": LockKeyNotFoundError,
}


def test_each_sqlstate_maps_to_its_class_keeping_the_diagnostics():
    names = {v for k, v in vars(claimqueue.SqlState).items() if not k.startswith("_")}
    assert names == set(EXPECTED)
    for sqlstate, error_class in EXPECTED.items():
        original = FakeDbError(sqlstate)
        mapped = claimqueue.to_claimqueue_error(original)
        assert type(mapped) is error_class
        assert isinstance(mapped, ClaimQueueError)
        assert mapped.sqlstate == sqlstate
        assert (mapped.message, mapped.detail, mapped.hint) == ("server said it", "a detail", "a hint")
        assert mapped.__cause__ is original


def test_unknown_qc_codes_and_other_errors():
    unknown = claimqueue.to_claimqueue_error(FakeDbError("QC999"))
    assert type(unknown) is ClaimQueueError and unknown.sqlstate == "QC999"
    other = FakeDbError("23505")
    assert claimqueue.to_claimqueue_error(other) is other
    plain = ValueError("x")
    assert claimqueue.to_claimqueue_error(plain) is plain


def test_is_stale_claim():
    assert claimqueue.is_stale_claim(FakeDbError("QC003"))
    assert claimqueue.is_stale_claim(claimqueue.to_claimqueue_error(FakeDbError("QC003")))
    assert not claimqueue.is_stale_claim(FakeDbError("QC002"))
    assert not claimqueue.is_stale_claim(ValueError())
