// Package surface holds the checks of actorlet's public Go surface, the
// API a user's module sees: no exported identifier of a public package
// names a type the user cannot name (one from an internal package), and
// no production package depends on the test-only packages of test/support.
// It has no code; its tests run `go list` over the module.
package surface
