import Foundation

/// Puts files in place as one folder, `folder/name`: each copied (its bytes, not a link to where
/// it was unpacked) into a folder beside the target, which is then moved into place, so a failed
/// install leaves nothing half-copied. A target that exists is an error unless `replace`.
/// The translation models and the voices a user installs go in this way.
public enum FolderInstall {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Returns the folder made. `files`: where each file is, and its name in the folder.
    public static func place(
        _ files: [(path: String, name: String)], into folder: String, as name: String, replace: Bool
    ) throws(Failure) -> String {
        let manager = FileManager.default
        let base = URL(fileURLWithPath: folder).standardizedFileURL.path
        let target = base + "/" + name
        if manager.fileExists(atPath: target) && !replace { throw Failure(description: "\(target) already exists; remove it, or pass --force to replace it") }
        let staging = base + "/.\(name).installing"
        do {
            try manager.createDirectory(atPath: base, withIntermediateDirectories: true)
            try? manager.removeItem(atPath: staging)
            try manager.createDirectory(atPath: staging, withIntermediateDirectories: true)
        } catch {
            throw Failure(description: "\(folder) cannot be written (\(error.localizedDescription)); choose another folder with --into")
        }
        defer { try? manager.removeItem(atPath: staging) }
        for file in files {
            do {
                let source = URL(fileURLWithPath: file.path).resolvingSymlinksInPath().path
                try manager.copyItem(atPath: source, toPath: staging + "/" + file.name)
            } catch {
                throw Failure(description: "\(file.path) cannot be copied (\(error.localizedDescription)); check the disk and its permissions")
            }
        }
        do {
            if manager.fileExists(atPath: target) { try manager.removeItem(atPath: target) }
            try manager.moveItem(atPath: staging, toPath: target)
        } catch {
            throw Failure(description: "\(target) cannot be replaced (\(error.localizedDescription)); check its permissions")
        }
        return target
    }
}
