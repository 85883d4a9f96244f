//! Several devices working through one list of inputs (`DevicePool`), on two OpenCL devices: this machine's
//! PoCL offers two when `POCL_DEVICES="pthread pthread"` is set before OpenCL starts, so the test runs itself
//! again as a child process with that variable (elsewhere the child sees whatever devices the host has).

mod common;
use cliper::prelude::*;
use cliper::{DevicePool, Filter, PoolResult};

/// A worker's state: its device's input and output arrays and the convolution between them.
type Worker = (XData<f32>, XData<f32>, Convolution<f32, f32>);

/// 40 images through a Gaussian on every device of the pool, one pipeline built per device: results equal to one
/// device's (the same kernels on the same kind of device), input 17 fails on purpose (wrong shape) and is the
/// only failure, named with its device; with two devices both take work. A stack cut along its slices over
/// the devices and gathered equals one device's.
#[test]
fn a_pool_of_two_devices_matches_one_and_reports_the_one_failure() {
    if common::ran_with_two_devices("a_pool_of_two_devices_matches_one_and_reports_the_one_failure") {
        return;
    }
    let apps = ClApp::builder().select("all").build_all().unwrap();
    let pocl = apps.iter().all(|a| a.device().platform_name.contains("Portable"));
    if pocl {
        assert_eq!(apps.len(), 2, "POCL_DEVICES=\"pthread pthread\" gives two devices");
    }
    let mut rng = common::Rng::new(91);
    let (h, w) = (37, 29);
    let inputs: Vec<Vec<f32>> = (0..40).map(|i| if i == 17 { vec![0.0; 5] } else { rng.vec::<f32>(h * w) }).collect();
    let filter = Filter::<f32>::named("gaussian:1.5", 2).unwrap();
    // Per device: the input and output arrays and the convolution, built once.
    let setup = |app: &ClApp| -> cliper::Result<Worker> {
        let x = XData::zeros(app, &[h, w])?;
        let y = XData::zeros(app, &[h, w])?;
        let mut conv = Convolution::new(&x, &filter, &y, ConvParams::default());
        conv.init()?;
        Ok((x, y, conv))
    };
    let work = |state: &mut Worker, _: &ClApp, data: &Vec<f32>| {
        let (x, y, conv) = state;
        x.write(data)?;
        conv.launch()?;
        y.to_vec()
    };
    let mut heard = 0;
    let pool = DevicePool::new(apps.clone()).unwrap();
    let results = pool.map_as_done(&inputs, setup, work, |_| heard += 1);
    assert_eq!(heard, 40);
    let single = DevicePool::new(vec![apps[0].clone()]).unwrap().map(&inputs, setup, work);
    for (i, (a, b)) in results.iter().zip(&single).enumerate() {
        assert_eq!(a.input, i);
        match (&a.result, &b.result) {
            (Ok(x), Ok(y)) => assert!(x == y, "input {i} differs between the pool and one device"),
            (Err(e), Err(_)) => {
                assert_eq!(i, 17, "{}", a.describe());
                let line = a.describe();
                assert!(
                    line.starts_with("input 17 on ") && line.contains("1073") && line.contains("5 elements"),
                    "{line}: {e}"
                );
            }
            _ => panic!("input {i}: {} / {}", a.describe(), b.describe()),
        }
    }
    assert_eq!(results.iter().filter(|r| r.result.is_err()).count(), 1);
    let shares = pool.shares(&results);
    assert_eq!(shares.iter().map(|s| s.inputs).sum::<usize>(), 40);
    if apps.len() > 1 {
        assert!(shares.iter().all(|s| s.inputs > 0), "every device takes work: {shares:?}");
    }
    println!("{shares:?}");
    // A stack cut along its slices over the devices and gathered: a per-slice 3 × 3 filter (shape [1, 3, 3]) gives
    // what one device gives, bit for bit; odd piece sizes leave a short last piece.
    let stack = ndarray::Array::from_shape_vec((13, 20, 30), rng.vec::<f32>(13 * 20 * 30)).unwrap().into_dyn();
    let slice_filter = Filter::new(&[1, 3, 3], vec![0.1f32, 0.2, 0.1, 0.2, -1.2, 0.2, 0.1, 0.2, 0.1]).unwrap();
    let per_slice = |_: &mut (), app: &ClApp, piece: ndarray::ArrayViewD<'_, f32>| {
        let x = XData::from_ndarray(app, &piece)?;
        Convolution::apply(&x, &slice_filter, ConvParams::default())?.to_ndarray()
    };
    let spread = pool.map_axis(&stack, 0, 3, |_| Ok(()), per_slice).unwrap();
    let alone = DevicePool::new(vec![apps[0].clone()]).unwrap().map_axis(&stack, 0, 13, |_| Ok(()), per_slice).unwrap();
    assert!(spread == alone, "the stack spread over the devices differs from one device's");
    let e = pool.map_axis(&stack, 3, 2, |_| Ok(()), per_slice).unwrap_err().to_string();
    assert!(e.contains("no axis 3"), "{e}");
    // A setup that fails everywhere: every input says why, naming a device.
    let failing: Vec<PoolResult<()>> = pool.map(
        &inputs[..3],
        |_| -> cliper::Result<()> { Err(cliper::Error::invalid("setup", "on purpose")) },
        |_, _, _| Ok(()),
    );
    assert!(failing.iter().all(|r| r.result.as_ref().is_err_and(|e| e.to_string().contains("on purpose"))));
}

/// Device sets: `all`, a kind with `:*`, and lists select every matching device once, best first.
#[test]
fn device_sets_select_every_matching_device() {
    let devices = ClApp::devices().unwrap();
    let all = ClApp::builder().select("all").build_all().unwrap();
    assert_eq!(all.len(), devices.len());
    let kind = devices[0].kind.to_string().to_lowercase();
    let of_kind = ClApp::builder().select(&format!("{kind}:*")).build_all().unwrap();
    assert_eq!(of_kind.len(), devices.iter().filter(|d| d.kind == devices[0].kind).count());
    let list = format!("{},{}", devices[0].id(), devices[0].id());
    assert_eq!(ClApp::builder().select(&list).build_all().unwrap().len(), 1);
    let e = ClApp::builder().select("no-such-device").build_all().unwrap_err().to_string();
    assert!(e.contains("no-such-device"), "{e}");
}
