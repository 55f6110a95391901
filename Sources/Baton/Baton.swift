// The umbrella module: `import Baton` brings in every Baton module.
@_exported import BatonLocks
@_exported import BatonCache
@_exported import BatonJobs
@_exported import BatonFutures
@_exported import BatonHTTP
