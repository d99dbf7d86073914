// Package e2e holds actorlet's end-to-end tests: they build the actorlet
// binary, run it as a subprocess against the local Docker Engine, and
// observe the containers it manages (and the ones it must leave alone).
//
// The tests need Docker: without it they skip, or fail when CI=true (see
// test/support/testimages). Each test has its own node name, root directory and
// manifest directory, and removes its containers at the end.
package e2e
