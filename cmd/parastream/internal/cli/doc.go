// Package cli is the command-line machinery the project's commands share:
// flag sets whose --help groups the flags and whose mistakes are one line
// naming the flag meant (NewFlags, Describe, Parse, ErrUsage), Beam's own
// flags passed through (AddBeamFlags), the SASL password read from a file
// or the environment (SASLPassword), the build's version and key
// dependencies (BuildVersion, LinkedModules) and the Beam runners a build
// has (CheckRunner).
package cli
