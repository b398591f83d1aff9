/*
 * claimqueue's own SQLSTATE class "QC" (classes I-Z are free for
 * implementations). Standard codes are used wherever one fits: 22023
 * invalid_parameter_value, 22004 null_value_not_allowed, 22003
 * numeric_value_out_of_range, 42622 name_too_long, 42710 duplicate_object,
 * 55006 object_in_use, 40001 serialization_failure, 42501 insufficient_privilege,
 * 42939 reserved_name, 55000 object_not_in_prerequisite_state.
 *
 *   QC000  claimqueue_error      generic, not raised on purpose
 *   QC001  queue_not_found       the named queue does not exist
 *   QC002  job_not_found         no job has that id
 *   QC003  stale_claim           the job is no longer running under that attempt
 *                                (its lease expired and it was reclaimed, or it
 *                                was completed, failed or cancelled)
 *   QC004  job_state_conflict    retry/cancel on a job in the wrong state
 *   QC005  isolation_not_supported  dequeue/reap/purge/drop_queue under REPEATABLE READ or SERIALIZABLE
 *   QC006  schedule_not_found    the named schedule does not exist
 *   QC007  queue_elsewhere       under Citus, a call made on a worker for a queue
 *                                (or a job) whose shard is on another node
 *
 * Advisory-lock namespaces use the subclass QCL (as PostgreSQL's own 'P'
 * subclasses), so their codes never meet the numbered ones:
 *
 *   QCL01  lock_namespace_not_found   no lock namespace has that name
 *   QCL02  lock_key_mode_mismatch     the namespace takes the other kind of key
 *                                     (text vs integer), or was registered with
 *                                     another key mode than the one asked for
 *   QCL03  lock_key_not_found         the key is not registered in that
 *                                     registered-mode namespace
 *
 * C-compatible on purpose: SQL tests and clients match these codes.
 */
#ifndef CLAIMQUEUE_ERRORS_H
#define CLAIMQUEUE_ERRORS_H

#define ERRCODE_CQ_ERROR                  MAKE_SQLSTATE('Q','C','0','0','0')
#define ERRCODE_CQ_QUEUE_NOT_FOUND        MAKE_SQLSTATE('Q','C','0','0','1')
#define ERRCODE_CQ_JOB_NOT_FOUND          MAKE_SQLSTATE('Q','C','0','0','2')
#define ERRCODE_CQ_STALE_CLAIM            MAKE_SQLSTATE('Q','C','0','0','3')
#define ERRCODE_CQ_JOB_STATE_CONFLICT     MAKE_SQLSTATE('Q','C','0','0','4')
#define ERRCODE_CQ_ISOLATION_NOT_SUPPORTED MAKE_SQLSTATE('Q','C','0','0','5')
#define ERRCODE_CQ_SCHEDULE_NOT_FOUND     MAKE_SQLSTATE('Q','C','0','0','6')
#define ERRCODE_CQ_QUEUE_ELSEWHERE        MAKE_SQLSTATE('Q','C','0','0','7')

#define ERRCODE_CQ_LOCK_NAMESPACE_NOT_FOUND MAKE_SQLSTATE('Q','C','L','0','1')
#define ERRCODE_CQ_LOCK_KEY_MODE_MISMATCH  MAKE_SQLSTATE('Q','C','L','0','2')
#define ERRCODE_CQ_LOCK_KEY_NOT_FOUND      MAKE_SQLSTATE('Q','C','L','0','3')

#endif /* CLAIMQUEUE_ERRORS_H */
