// Package probe is actorlet's container probing without actors: the
// probers (exec, httpGet, tcpSocket, grpc), the kubelet's defaults and
// thresholds, and the decisions of one probe worker as a pure state
// machine. The probe actors own the timers and the goroutines; everything
// here is either a pure function or a single blocking probe.
//
// The behaviour follows the kubelet's prober (pkg/kubelet/prober):
//
//   - Defaults: initialDelaySeconds 0, periodSeconds 10, timeoutSeconds 1,
//     successThreshold 1, failureThreshold 3, applied to zero fields.
//   - A probe's result is Success, Failure or Unknown. Unknown means the
//     probe could not be carried out (a probe error, e.g. the runtime
//     could not exec, a named port that does not exist, the probe was
//     cancelled); it is never a failure and is thrown away by the
//     thresholds.
//   - The reported state changes only after successThreshold successes or
//     failureThreshold failures in a row (Tracker).
//   - Initial states: liveness Success, readiness Failure, startup
//     Unknown (not started yet).
//   - Liveness and readiness probes wait until the startup probe has
//     passed; the startup probe stops once it has. A failed liveness or
//     startup probe puts its worker on hold until a new container appears
//     (Worker).
//
// gRPC probes call grpc.health.v1.Health/Check as the kubelet's
// (pkg/probe/grpc): plain text, SERVING is Success, anything else a
// Failure with the kubelet's message.
package probe
