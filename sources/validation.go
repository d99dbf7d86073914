package sources

// Validation is what a node's operator allows in pods beyond the strict
// default: the sources' WithValidation options take it (`actorlet run`'s
// --allow-privileged and --allow-host-path). Give a node's sources the
// same permissions as its node.Options, or a pod one allows the other
// refuses. The zero value allows neither.
type Validation struct {
	// AllowPrivileged allows securityContext.privileged: true.
	AllowPrivileged bool
	// AllowHostPath allows hostPath volumes.
	AllowHostPath bool
	// AppArmor says whether the host has AppArmor enabled, which a
	// Localhost AppArmor profile needs; nil reads it from the host.
	AppArmor *bool
}
