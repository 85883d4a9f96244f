//! Retargeting NVIDIA's PTX to `sm_90a`, so that kernels can use Hopper's architecture-specific instructions
//! (`wgmma`). NVIDIA's OpenCL compiles for `.target sm_90`, where ptxas refuses them, and no build option changes
//! the target (`scripts/probes/wgmma_ptx_patch.c`, `docs/benchmarks/h100-issue27-2026-11-26-wgmma-probe.txt`).
//! A kernel therefore writes such an instruction as a PTX comment line that starts with [`SM90A_MARK`]: the OpenCL
//! compiler passes it through with its operands substituted, and [`retarget_sm90a`] turns the program's PTX into
//! one for `sm_90a` with those lines made instructions. The driver builds that from the patched text
//! ([`crate::ClApp::build_program_sm90a`]).

use crate::error::{Error, Result};

/// The start of a PTX comment line that is an instruction for `sm_90a`.
pub(crate) const SM90A_MARK: &str = "//@sm90a ";

/// `ptx` (NVIDIA's binary of a program: PTX text) for `.target sm_90a`, with every line that starts with
/// [`SM90A_MARK`] made an instruction. An error when the text is not PTX for `sm_90` (another driver's binary or
/// another GPU), or when it has no marked line (a build without the marked kernels: nothing to retarget).
pub(crate) fn retarget_sm90a(ptx: &[u8]) -> Result<Vec<u8>> {
    let unsupported = |why: &str| Error::Unsupported { what: format!("retargeting a program to sm_90a: {why}") };
    let end = ptx.iter().position(|&b| b == 0).unwrap_or(ptx.len());
    let text = std::str::from_utf8(ptx.get(..end).unwrap_or_default())
        .map_err(|_| unsupported("the driver's binary is not PTX text"))?;
    let mut out = String::with_capacity(text.len() + 64);
    let (mut target, mut marked) = (false, 0usize);
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix(".target ") {
            let mut parts = rest.splitn(2, ',');
            let arch = parts.next().unwrap_or_default().trim();
            if arch != "sm_90" {
                return Err(unsupported(&format!("the PTX is for {arch}, not sm_90")));
            }
            target = true;
            out.push_str(".target sm_90a");
            if let Some(tail) = parts.next() {
                out.push(',');
                out.push_str(tail);
            }
        } else if let Some(instruction) = trimmed.strip_prefix(SM90A_MARK) {
            marked += 1;
            out.push('\t');
            out.push_str(instruction);
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    if !target {
        return Err(unsupported("the driver's binary has no .target line (not PTX)"));
    }
    if marked == 0 {
        return Err(unsupported(&format!("the PTX has no line marked `{}`", SM90A_MARK.trim())));
    }
    Ok(out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marked_comments_become_instructions_for_sm_90a() {
        let ptx = b".version 9.0\n.target sm_90, texmode_independent\n\t//@sm90a wgmma.fence.sync.aligned;\n\tret;\n\0";
        let out = String::from_utf8(retarget_sm90a(ptx).unwrap()).unwrap();
        assert_eq!(out, ".version 9.0\n.target sm_90a, texmode_independent\n\twgmma.fence.sync.aligned;\n\tret;\n");
    }

    #[test]
    fn other_targets_and_unmarked_programs_are_refused() {
        let other = retarget_sm90a(b".target sm_80\n//@sm90a x;\n").unwrap_err().to_string();
        assert!(other.contains("sm_80"), "{other}");
        let unmarked = retarget_sm90a(b".target sm_90\nret;\n").unwrap_err().to_string();
        assert!(unmarked.contains("no line marked"), "{unmarked}");
        assert!(retarget_sm90a(b"\x7fELF").unwrap_err().to_string().contains("no .target"));
    }
}
