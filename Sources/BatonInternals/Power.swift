/// `base` raised to `exponent`: the C library's `pow`, so that a module needs neither Foundation
/// nor a platform import of its own for it.
package func power(_ base: Double, _ exponent: Double) -> Double {
    pow(base, exponent)
}
