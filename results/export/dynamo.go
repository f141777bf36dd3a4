package export

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/timing"
)

// DynamoFile is the name of the Dynamo manifest.
const DynamoFile = "dynamo-deployment.yaml"

// dynamoImageTag is the Dynamo release whose runtime images the manifest names.
const dynamoImageTag = "0.6.1"

// trtllmOptionsDir is where the Dynamo TensorRT-LLM workers mount their LLM-API options.
const trtllmOptionsDir = "/etc/servesweep"

// dynamo returns the DynamoGraphDeployment of the config: a frontend with the router mode, and
// one service per worker role with its replicas, GPUs and engine arguments. TensorRT-LLM's
// options go into a ConfigMap the workers mount.
func (x *exporter) dynamo() []File {
	image := fmt.Sprintf("nvcr.io/nvidia/ai-dynamo/%s-runtime:%s", x.backend, dynamoImageTag)
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Dynamo deployment of %s (servesweep export --target dynamo): %s %s serving, router.policy %s.\n",
		x.sourceName(), x.cfg.Engine.Mode, x.backendName(), x.cfg.Router.Policy)
	fmt.Fprintf(&b, "# Resource shape: DynamoGraphDeployment of Dynamo %s. Engine arguments as for --target %s: %s %s.\n",
		coveredVersions[TargetDynamo], x.backend, x.backendName(), coveredVersions[x.backend])
	b.WriteString("# Apply with: kubectl apply -n NAMESPACE -f " + DynamoFile + "\n")
	b.WriteString("# Benchmark through the frontend: kubectl port-forward -n NAMESPACE svc/" + x.name + "-frontend 8000:8000\n")
	b.WriteString("# The images are Dynamo " + dynamoImageTag + "'s; use your release's. Gated models need the secret hf-token-secret (HF_TOKEN).\n")

	x.checkDynamoHardware()
	for _, r := range x.roles() {
		x.roleShapeComment(&b, r, ";")
	}
	b.WriteString("# the manifest requests GPUs by count: pin their type with your cluster's node selectors.\n")
	services := []kv{{"Frontend", x.dynamoFrontend(image)}}
	var optionFiles []kv
	for _, r := range x.roles() {
		svc, file := x.dynamoWorker(r, image)
		services = append(services, kv{x.workerServiceName(r), svc})
		if file != nil {
			optionFiles = append(optionFiles, *file)
		}
	}
	writeYAML(&b, []kv{
		{"apiVersion", "nvidia.com/v1alpha1"},
		{"kind", "DynamoGraphDeployment"},
		{"metadata", []kv{{"name", x.name}}},
		{"spec", []kv{{"services", services}}},
	}, 0)
	if len(optionFiles) > 0 {
		b.WriteString("---\n# The TensorRT-LLM workers' LLM-API options, mounted at " + trtllmOptionsDir + ".\n")
		writeYAML(&b, []kv{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", []kv{{"name", x.name + "-trtllm"}}}}, 0)
		b.WriteString("data:\n")
		for _, f := range optionFiles {
			fmt.Fprintf(&b, "  %s: |\n", f.key)
			for _, line := range strings.SplitAfter(strings.TrimSuffix(f.value.(string), "\n"), "\n") {
				b.WriteString("    " + line)
			}
			b.WriteString("\n")
		}
	}
	return []File{{Name: DynamoFile, Data: b.Bytes()}}
}

// dynamoFrontend is the frontend service: the HTTP port and the router mode of router.policy.
// router.seed is left out, as the other seeds are: it picks the simulation's random draws, not a
// setting of the deployment.
func (x *exporter) dynamoFrontend(image string) []kv {
	args := []string{"--http-port", "8000"}
	rt := x.cfg.Router
	switch rt.Policy {
	case config.PolicyRoundRobin, "":
		args = append(args, "--router-mode", "round-robin")
	case config.PolicyRandom:
		args = append(args, "--router-mode", "random")
	case config.PolicyKVRouter:
		args = append(args, "--router-mode", "kv")
		if v := rt.OverlapScoreCredit; v != nil {
			args = append(args, "--kv-overlap-score-weight", ftoa(*v))
		}
		if v := rt.Temperature; v != nil {
			args = append(args, "--router-temperature", ftoa(*v))
		}
		if v := rt.PrefillLoadScale; v != nil && *v != 1 {
			x.unsupported("router.prefill_load_scale", *v, "Dynamo's frontend has no setting that scales the prefill load of its KV router; omit it or set 1")
		}
	default:
		x.unsupported("router.policy", rt.Policy, "Dynamo's frontend routes round-robin, random or kv (router.policy round_robin, random or kv_router)")
	}
	return []kv{
		{"dynamoNamespace", x.name},
		{"componentType", "frontend"},
		{"replicas", 1},
		{"extraPodSpec", []kv{{"mainContainer", []kv{
			{"image", image},
			{"command", []string{"python3", "-m", "dynamo.frontend"}},
			{"args", args},
		}}}},
	}
}

// workerServiceName names a role's service, e.g. VllmDecodeWorker.
func (x *exporter) workerServiceName(r roleRef) string {
	prefix := map[string]string{config.BackendVLLM: "Vllm", config.BackendSGLang: "SGLang", config.BackendTRTLLM: "TRTLLM"}[x.backend]
	switch r.name {
	case config.RolePrefill:
		return prefix + "PrefillWorker"
	case config.RoleDecode:
		return prefix + "DecodeWorker"
	}
	return prefix + "Worker"
}

// dynamoWorker is the service of one worker role, and for TensorRT-LLM its options file (a
// ConfigMap key and the file's text).
func (x *exporter) dynamoWorker(r roleRef, image string) ([]kv, *kv) {
	var module string
	var args []string
	var file *kv
	container := []kv{{"image", image}}
	var pod []kv
	switch x.backend {
	case config.BackendSGLang:
		module = "dynamo.sglang"
		args = append([]string{"--model-path", x.model, "--served-model-name", x.model}, flatten(x.sglangArgs(r, false))...)
	case config.BackendTRTLLM:
		module = "dynamo.trtllm"
		key := string(r.name) + ".yaml"
		file = &kv{key, string(x.trtllmYAML(r, true))}
		args = []string{"--model-path", x.model, "--served-model-name", x.model, "--extra-engine-args", trtllmOptionsDir + "/" + key}
		if x.disaggregated() {
			args = append(args, "--disaggregation-mode", string(r.name))
		}
		container = append(container, kv{"volumeMounts", [][]kv{{{"name", "llm-api-options"}, {"mountPath", trtllmOptionsDir}}}})
		pod = append(pod, kv{"volumes", [][]kv{{{"name", "llm-api-options"}, {"configMap", []kv{{"name", x.name + "-trtllm"}}}}}})
	default:
		module = "dynamo.vllm"
		args = append([]string{"--model", x.model}, flatten(x.vllmArgs(r, false))...)
		if r.name == config.RolePrefill {
			args = append(args, "--is-prefill-worker")
		}
	}
	container = append(container, kv{"command", []string{"python3", "-m", module}}, kv{"args", args})
	p := r.w.Parallelism
	svc := []kv{
		{"dynamoNamespace", x.name},
		{"envFromSecret", "hf-token-secret"},
		{"componentType", "worker"},
	}
	if x.disaggregated() {
		svc = append(svc, kv{"subComponentType", string(r.name)})
	}
	svc = append(svc,
		kv{"replicas", p.Replicas},
		kv{"resources", []kv{{"limits", []kv{{"gpu", itoa(p.GPUsPerWorker())}}}}},
		kv{"extraPodSpec", append(pod, kv{"mainContainer", container})})
	return svc, file
}

// checkDynamoHardware refuses roles on different GPUs: a DynamoGraphDeployment requests a
// worker's GPUs by count alone (resources.limits.gpu), so the cluster would place every role on
// whatever GPUs it schedules, not the ones the deployment was timed and priced on (each role's
// hardware, else engine.hardware; aliases resolved).
func (x *exporter) checkDynamoHardware() {
	first := ""
	for _, r := range x.roles() {
		hw := r.w.Hardware
		if hw == "" {
			hw = x.cfg.Engine.Hardware
		}
		id, _ := timing.ResolveHardwareID(hw)
		if first == "" {
			first = id
			continue
		}
		if id != first {
			path := r.path + ".hardware"
			if r.w.Hardware == "" {
				path = "engine.hardware" // the role inherits it
			}
			x.unsupported(path, hw, fmt.Sprintf("a DynamoGraphDeployment requests each worker's GPUs by count "+
				"(resources.limits.gpu), so the cluster would run this role on whatever GPUs it schedules, not the %s "+
				"it was timed and priced on beside the other role's %s; give both roles one hardware, or export each role "+
				"for target %s, whose launch files name the GPU", id, first, x.backend))
		}
	}
}
