@_exported import BatonCache
@_exported import BatonFutures
@_exported import BatonHTTP
@_exported import BatonJobs
// The umbrella module: `import Baton` brings in every Baton module.
@_exported import BatonLocks
