import CachingProxy
import Foundation
import Testing

/// The proxy's rules as values: origins and cache lifetimes.
@Suite struct RulesTests {
    @Test func anOriginIsSchemeHostAndPortInLowerCaseWithTheDefaultPort() throws {
        let origin = try #require(Origin("HTTP://Example.ORG"))
        #expect(origin.description == "http://example.org:80")
        #expect(Origin(of: URL(string: "http://example.org/a?b")!) == origin)
        #expect(Origin(of: URL(string: "http://example.org:80/")!) == origin)
        #expect(Origin(of: URL(string: "http://example.org:8080/")!) != origin)
        #expect(Origin(of: URL(string: "https://example.org/")!)?.port == 443)
    }

    @Test(arguments: [
        "", "example.org", "ftp://example.org", "http://", "http://example.org/path", "http://example.org?q",
        "http://user@example.org",
    ])
    func whatIsNotAnOriginIsRefused(_ string: String) {
        #expect(Origin(string) == nil)
    }

    @Test(arguments: [
        ("max-age=60", 60), ("public, max-age=60", 60), ("MAX-AGE=60", 60), ("max-age=\"60\"", 60),
        ("max-age=60, s-maxage=120", 120), ("s-maxage=5, max-age=60", 5),
    ])
    func aLifetimeIsTheSharedMaxAgeOrTheMaxAge(_ header: String, _ seconds: Int) {
        #expect(CacheLifetime.of(cacheControl: header) == .seconds(seconds))
    }

    @Test(
        arguments: [
            nil, "", "public", "no-store", "no-cache", "private", "private=\"set-cookie\", max-age=60",
            "max-age=60, no-store",
            "max-age=0", "max-age=-1", "max-age=1.5", "max-age=", "max-age=abc", "s-maxage=0, max-age=60",
        ] as [String?])
    func whatMustNotBeKeptHasNoLifetime(_ header: String?) {
        #expect(CacheLifetime.of(cacheControl: header) == nil)
    }
}
