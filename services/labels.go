package services

// Ownership labels. Every container, volume and network the manager creates
// carries LabelManaged and LabelProject; the manager lists, adopts, stops and
// removes only objects that carry both, so nothing a user made by hand is
// ever touched.
const (
	// LabelManaged is "true" on everything skillgate creates.
	LabelManaged = "io.skillgate.managed"
	// LabelProject is the project (one gateway configuration) it belongs to.
	LabelProject = "io.skillgate.project"
	// LabelRole is RoleService, RoleServer, RoleVolume or RoleNetwork.
	LabelRole = "io.skillgate.role"
	// LabelService names the service of a service container or volume.
	LabelService = "io.skillgate.service"
	// LabelServer names the MCP server of a server container.
	LabelServer = "io.skillgate.server"
	// LabelConfig is a hash of the definition a container was created from;
	// a container whose hash differs from the current one is recreated.
	LabelConfig = "io.skillgate.config-hash"
	// LabelOwner is the owner id (NewOwner) of the process that created a
	// container or a presence marker; containers `skillgate services up`
	// starts have none. See owner.go.
	LabelOwner = "io.skillgate.owner"
)

// Values of LabelRole.
const (
	RoleService = "service"
	RoleServer  = "mcp-server"
	RoleVolume  = "volume"
	RoleNetwork = "network"
	// RolePresence marks a volume that holds no data: it says that the
	// process of its LabelOwner uses the project's services.
	RolePresence = "presence"
)

// ownerLabels are the labels every object of project carries.
func ownerLabels(project string) map[string]string {
	return map[string]string{LabelManaged: "true", LabelProject: project}
}

// withLabels returns ownerLabels(project) plus kv pairs.
func withLabels(project string, kv ...string) map[string]string {
	m := ownerLabels(project)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// owned reports whether labels mark an object of project.
func owned(labels map[string]string, project string) bool {
	return labels[LabelManaged] == "true" && labels[LabelProject] == project
}

// ContainerName is the deterministic name of a service's container. Service
// and project names cannot contain a dot, so names never collide.
func ContainerName(project, service string) string { return "skillgate." + project + "." + service }

// ServerContainerName is the name of an MCP server's container run by the
// manager of owner id (ServerContainer.Owner): each gateway of a project
// runs its own, so two never fight over one name. An empty owner gives the
// bare name.
func ServerContainerName(project, server, owner string) string {
	name := "skillgate." + project + ".mcp." + server
	if owner != "" {
		name += "." + shortID(owner)
	}
	return name
}

// NetworkName is the name of a project's network, where its services reach
// each other by service name.
func NetworkName(project string) string { return "skillgate." + project }

// VolumeName is the engine's name of a service's named volume.
func VolumeName(project, volume string) string { return "skillgate." + project + "." + volume }
