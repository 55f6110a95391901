// Without the Tools trait the package has no argument parser (a library consumer must not fetch
// one), so `baton` is built as this one message instead of failing to build.
#if !Tools
import Foundation

@main
enum BatonCommand {
    static func main() {
        let message = "baton: built without the Tools trait. Run it as `swift run -c release --traits Tools baton …`.\n"
        FileHandle.standardError.write(Data(message.utf8))
        exit(2)
    }
}
#endif
