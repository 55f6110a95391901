// The C library, for every module that builds on BatonInternals: the one place that says which
// module it is on each platform.
#if canImport(Darwin)
@_exported import Darwin
#elseif canImport(Glibc)
@_exported import Glibc
#elseif canImport(Musl)
@_exported import Musl
#endif
