// Package version holds actorlet's release version.
package version

// Version is actorlet's semantic version. Images actorlet builds for itself
// (the pause image) are tagged with it.
const Version = "0.1.0"
