import Foundation

/// How long a response may be kept in a shared cache, from its `Cache-Control` header.
///
/// - `no-store`, `no-cache` and `private` (with or without a field list): not kept. The proxy
///   does not revalidate, so a response that must be revalidated is not kept either.
/// - `s-maxage=N` (a shared cache's own lifetime), else `max-age=N`: kept N seconds; 0 or a
///   value that is not a whole number is not kept.
/// - no header, or none of these: not kept. The proxy keeps only what the upstream says it may.
///
/// Directive names are read in any case, and values may be quoted.
public enum CacheLifetime {
    /// The lifetime `cacheControl` gives, or `nil` if the response must not be kept.
    public static func of(cacheControl: String?) -> Duration? {
        guard let cacheControl else { return nil }
        var maxAge: Int?
        var sharedMaxAge: Int?
        for directive in cacheControl.split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1)
            let name = parts[0].trimmingCharacters(in: .whitespaces).lowercased()
            let value = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : nil
            switch name {
            case "no-store", "no-cache", "private":
                return nil
            case "max-age":
                maxAge = value.flatMap(Self.seconds)
            case "s-maxage":
                sharedMaxAge = value.flatMap(Self.seconds)
            default:
                continue
            }
        }
        guard let seconds = sharedMaxAge ?? maxAge, seconds > 0 else { return nil }
        return .seconds(seconds)
    }

    /// A directive's value as whole seconds: digits, perhaps in quotes.
    private static func seconds(_ value: String) -> Int? {
        let unquoted =
            value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 2
            ? value.dropFirst().dropLast() : value[...]
        guard !unquoted.isEmpty, unquoted.allSatisfy(\.isASCII), unquoted.allSatisfy(\.isNumber) else { return nil }
        return Int(unquoted)
    }
}
