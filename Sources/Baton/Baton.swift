// The umbrella module: `import Baton` brings in every Baton module.
@_exported import BatonLocks
@_exported import BatonJobs
