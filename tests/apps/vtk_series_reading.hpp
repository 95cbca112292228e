#pragma once
// Reading a .pvd collection and its .vtu frames back with VTK's own XML readers — what
// ParaView does when it opens the output of `cholsim corot` / `cholsim opsplit`. Shared by the
// writer's unit test and the read_vtk_series checker the app tests run.
#include <filesystem>
#include <string>
#include <vector>

#include <vtkSmartPointer.h>
#include <vtkUnstructuredGrid.h>

namespace cholsim::apps::testing {

/// One <DataSet> entry of a .pvd collection.
struct CollectionEntry {
  double time = 0.0;
  std::filesystem::path file;  ///< resolved against the .pvd's folder
};

/// Parses `pvd` with VTK's XML parser; throws std::runtime_error naming the file when it is
/// not a VTKFile of type "Collection" or a DataSet lacks its timestep/file attribute.
std::vector<CollectionEntry> read_collection(const std::filesystem::path& pvd);

/// Reads one .vtu with vtkXMLUnstructuredGridReader; throws std::runtime_error naming the
/// file when VTK reports any error (missing file, bad header, failed decompression).
vtkSmartPointer<vtkUnstructuredGrid> read_unstructured_grid(const std::filesystem::path& vtu);

}  // namespace cholsim::apps::testing
